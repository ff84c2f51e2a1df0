// swift-tools-version:6.1
// mlkit: text classification for Swift on Linux and Apple platforms.
//
// Module graph (docs/architecture.md explains it):
//   CBLAS  (system library: OpenBLAS on Linux)      CICU (C, system ICU; only with the ICU trait)
//      \                                           /
//       MLKit  — the core: Foundation + the system libraries above, nothing else
//          |
//       MLKitCollections — the collection client (URLSession)
//          |
//       mlkit  — the command-line tool (swift-argument-parser)
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

#if canImport(Darwin)
// On Apple platforms the same CBLAS calls come from Accelerate.
let blasDependency: [Target.Dependency] = []
let blasLinker: [LinkerSetting] = [.linkedFramework("Accelerate")]
let blasTargets: [Target] = []
#else
let blasDependency: [Target.Dependency] = ["CBLAS"]
let blasLinker: [LinkerSetting] = []
let blasTargets: [Target] = [
    .systemLibrary(
        name: "CBLAS",
        pkgConfig: "openblas",
        providers: [.apt(["libopenblas-dev"])]
    )
]
#endif

let package = Package(
    name: "mlkit",
    products: [
        .library(name: "MLKit", targets: ["MLKit"]),
        .library(name: "MLKitCollections", targets: ["MLKitCollections"]),
        .executable(name: "mlkit", targets: ["mlkit"]),
    ],
    traits: [
        .trait(
            name: "ICU",
            description: "Links the system ICU (libicu-dev) for the dictionary word tokenizer (`icu`)."
        ),
        .default(enabledTraits: ["ICU"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: blasTargets + [
        .target(
            name: "CICU",
            linkerSettings: [.linkedLibrary("icuuc")]
        ),
        .target(
            name: "MLKit",
            dependencies: blasDependency + [
                .target(name: "CICU", condition: .when(traits: ["ICU"])),
            ],
            swiftSettings: strictSettings + [.define("MLKIT_ICU", .when(traits: ["ICU"]))],
            linkerSettings: blasLinker
        ),
        .target(
            name: "MLKitCollections",
            dependencies: ["MLKit"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "mlkit",
            dependencies: [
                "MLKit",
                "MLKitCollections",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "MLKitProbe",
            dependencies: ["MLKit"],
            path: "Sources/MLKitProbe",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MLKitTests",
            dependencies: ["MLKit"],
            exclude: ["Fixtures"],  // golden model files, read by path
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CollectionTests",
            dependencies: ["MLKitCollections", "MLKit", "mlkit"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CLITests",
            dependencies: ["mlkit"],
            swiftSettings: strictSettings
        ),
    ]
)
