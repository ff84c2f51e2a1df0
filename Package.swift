// swift-tools-version:6.1
// mlkit: text classification for Swift on Linux and Apple platforms.
//
// Module graph (docs/architecture.md explains it):
//   CBLAS (system library: OpenBLAS on Linux)   CSystemZlib (system library: zlib, for CRC-32)
//   CPlatform (C: AVX sparse kernels)      CICU (C, system ICU; only with the ICU trait)
//                 \                             /
//       MLKit  — the core: Foundation + the C targets above, nothing else
//          |
//       MLKitEncryption — encrypted model files and key providers (swift-crypto)
//          |      MLKitCoreML — Core ML models, archives and export (MLKit, swift-protobuf, ZIPFoundation)
//          |
//       MLKitCollections — the collection client (URLSession)
//          |
//       mlkit  — the command-line tool (swift-argument-parser)
//   MLKitServer (MLKit, MLKitEncryption, Hummingbird 2, GRDB, postgres-nio, swift-crypto, swift-log,
//                swift-service-lifecycle)
//          sits beside the core and under `mlkit serve`
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
        .library(name: "MLKitEncryption", targets: ["MLKitEncryption"]),
        .library(name: "MLKitCollections", targets: ["MLKitCollections"]),
        .executable(name: "mlkit", targets: ["mlkit"]),
        .library(name: "MLKitServer", targets: ["MLKitServer"]),
        .library(name: "MLKitCoreML", targets: ["MLKitCoreML"]),
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
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The collection server (MLKitServer).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The API contract test reads docs/openapi.yaml.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // Core ML interchange (MLKitCoreML).
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        // The collection server's shared store (`mlkit serve --database postgres://…`).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: blasTargets + [
        .systemLibrary(
            name: "CSystemZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(name: "CPlatform"),
        .target(
            name: "CICU",
            linkerSettings: [.linkedLibrary("icuuc")]
        ),
        .target(
            name: "MLKit",
            dependencies: blasDependency + [
                "CSystemZlib",
                "CPlatform",
                .target(name: "CICU", condition: .when(traits: ["ICU"])),
            ],
            swiftSettings: strictSettings + [.define("MLKIT_ICU", .when(traits: ["ICU"]))],
            linkerSettings: blasLinker
        ),
        .target(
            name: "MLKitEncryption",
            dependencies: ["MLKit", .product(name: "Crypto", package: "swift-crypto"),
                           // AES-CBC, for Apple's encrypted model archives.
                           .product(name: "_CryptoExtras", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MLKitCoreML",
            dependencies: [
                "MLKit",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            // The trimmed format and the script that turns it into the committed Swift code.
            exclude: ["Specification/CoreMLSpecification.proto", "Specification/generate.sh"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MLKitServer",
            dependencies: [
                "MLKit",
                "MLKitEncryption",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "MLKitCollections",
            // Crypto only for SHA-256: the package MLKitEncryption already brings.
            dependencies: ["MLKit", "MLKitEncryption", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "mlkit",
            dependencies: [
                "MLKit",
                "MLKitEncryption",
                "MLKitServer",
                "MLKitCollections",
                "MLKitCoreML",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The bundled sentiment model, which `swift build` copies into the resources folder
            // beside the binary, where `predict` looks for it (ModelLocation.swift).
            resources: [.copy("../../trained/sentiment.mlkit")],
            swiftSettings: strictSettings
        ),
        // Child processes with deadlines, for the tests that run the built binary; the paths of
        // the fixtures and of the reference files beside the checkout; and the one launcher of
        // `mlkit serve` that the end-to-end suites share.
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MLKitTests",
            dependencies: ["MLKit", "TestSupport"],
            exclude: ["Fixtures"],  // golden model files, read by path
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "EncryptionTests",
            dependencies: ["MLKitEncryption", "MLKit", "TestSupport"],
            exclude: ["Fixtures"],  // encrypted golden model files and their test keys, read by path
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CollectionTests",
            dependencies: ["MLKitCollections", "MLKitEncryption", "MLKit", "mlkit", "TestSupport",
                           .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CLITests",
            dependencies: ["mlkit", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CoreMLTests",
            // mlkit for the end-to-end tests of its Core ML verbs, which run the built binary.
            dependencies: ["MLKitCoreML", "MLKit", "MLKitEncryption", "mlkit", "TestSupport",
                           .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                           // To build model archives of the tests' own, plain and encrypted.
                           .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                           .product(name: "_CryptoExtras", package: "swift-crypto")],
            exclude: ["Scripts"],  // the coremltools check, run with the .venv-coreml Python
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ServerTests",
            // HummingbirdTesting runs requests through the router in process; GRDB reads the
            // store after a crash (integrity_check); Yams reads docs/openapi.yaml.
            dependencies: ["mlkit", "MLKit", "MLKitEncryption", "MLKitServer", "TestSupport",
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdTesting", package: "hummingbird"),
                           .product(name: "HTTPTypes", package: "swift-http-types"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                           .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Yams", package: "Yams")],
            swiftSettings: strictSettings
        ),
    ]
)
