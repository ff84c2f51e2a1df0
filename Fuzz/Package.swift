// swift-tools-version:6.1
// mlkit's fuzz harnesses: one libFuzzer executable per parser, built with
// `-sanitize=fuzzer` plus the address and undefined-behaviour sanitizers by `run.sh`.
//
// Adding a harness: a folder `Sources/NAME/` holding `main.swift` (which defines
// `LLVMFuzzerTestOneInput`, and `LLVMFuzzerInitialize` to write its seeds), and NAME in the
// list below. `./run.sh NAME SECONDS` builds and runs it (docs/reliability.md).
import PackageDescription

/// Every harness, by name: its folder under `Sources/` and the executable `run.sh` runs.
let harnesses = [
    "model-file",
    "encrypted-model",
    "key-file",
    "json-dataset",
    "jsonl-dataset",
    "csv-dataset",
    "labeled-folder",
    "tokenizer",
    "server-request",
    "coreml-model",
    "coreml-archive",
]

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "mlkit-fuzz",
    dependencies: [
        .package(name: "mlkit", path: ".."),
        // AES-CBC, to encrypt Core ML archives as Apple does (the archive harness's known key).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "MLKit", package: "mlkit"),
                .product(name: "MLKitEncryption", package: "mlkit"),
                .product(name: "MLKitCoreML", package: "mlkit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
    ] + harnesses.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                "FuzzSupport",
                .product(name: "MLKit", package: "mlkit"),
                .product(name: "MLKitEncryption", package: "mlkit"),
                .product(name: "MLKitCoreML", package: "mlkit"),
            ]
            // Only the server's harness links the server (and swift-nio, Hummingbird, GRDB), so
            // that building one of the others does not build them.
            + (name == "server-request" ? [.product(name: "MLKitServer", package: "mlkit")] : []),
            // libFuzzer supplies `main`.
            swiftSettings: strictSettings + [.unsafeFlags(["-parse-as-library"])]
        )
    }
)
