// swift-tools-version:6.1
// mlkit's benchmark code, a package of its own so that the root package never builds it nor
// resolves ordo-one/benchmark: `swift build` at the repository root knows nothing of this folder.
//
// - `MLKitProbe` (Sources/MLKitProbe): the quick speed probe, and mlkit's side of the peer
//   comparison (compare/) and of the word-tagger comparison (tagger/).
// - `CoreMLProbe` (Sources/CoreMLProbe): mlkit's side of the Core ML benchmark against
//   onnxruntime (coreml/).
// - `MLKitBenchmarks` (Benchmarks/MLKitBenchmarks): micro-benchmarks, run with ordo-one's
//   `benchmark` plugin: `swift package benchmark`.
//
// Build the probes from the repository root with
// `swift build -c release --package-path Benchmarks --product MLKitProbe` (or `CoreMLProbe`);
// the binaries land in `Benchmarks/.build/release/`. README.md explains what each measures.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "MLKitBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "mlkit", path: ".."),
        // Only the MallocInterposer trait: malloc counts without jemalloc or any system library,
        // and without the default RuntimeInterposer trait's extra package.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "MLKitProbe",
            dependencies: [
                .product(name: "MLKit", package: "mlkit"),
                .product(name: "MLKitEncryption", package: "mlkit"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "CoreMLProbe",
            dependencies: [
                .product(name: "MLKit", package: "mlkit"),
                .product(name: "MLKitCoreML", package: "mlkit"),
            ],
            swiftSettings: strictSettings
        ),
        // The plugin finds benchmark targets under Benchmarks/<Name>/ of this package.
        .executableTarget(
            name: "MLKitBenchmarks",
            dependencies: [
                .product(name: "MLKit", package: "mlkit"),
                .product(name: "MLKitEncryption", package: "mlkit"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MLKitBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
    ]
)
