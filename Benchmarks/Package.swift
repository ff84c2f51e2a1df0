// swift-tools-version:6.1
// mlkit's micro-benchmarks, run with ordo-one's `benchmark` plugin: `swift package benchmark`.
//
// A package of its own so that the root package never resolves ordo-one/benchmark or its
// dependencies: `swift build` at the repository root knows nothing of this folder.
// Benchmarks/README.md explains what each benchmark measures and how to compare baselines.
import PackageDescription

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
