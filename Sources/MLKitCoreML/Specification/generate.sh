#!/usr/bin/env bash
# Regenerates CoreMLSpecification.pb.swift from CoreMLSpecification.proto.
#
# Needs protoc (Debian's protobuf-compiler) and protoc-gen-swift of the swift-protobuf version
# that Package.swift names, built once outside the repository:
#
#   git clone https://github.com/apple/swift-protobuf /tmp/swift-protobuf
#   (cd /tmp/swift-protobuf && git checkout 1.39.0 && swift build -c release --product protoc-gen-swift)
#   PROTOC_GEN_SWIFT=/tmp/swift-protobuf/.build/release/protoc-gen-swift bash generate.sh
#
# The generated code is committed, so building mlkit needs neither tool.
set -euo pipefail
cd "$(dirname "$0")"
plugin="${PROTOC_GEN_SWIFT:-$(command -v protoc-gen-swift || true)}"
if [ -z "$plugin" ] || [ ! -x "$plugin" ]; then
    echo "generate.sh: set PROTOC_GEN_SWIFT to the protoc-gen-swift binary (see the comment at the top)" >&2
    exit 1
fi
protoc --plugin=protoc-gen-swift="$plugin" --swift_opt=Visibility=Internal --swift_out=. CoreMLSpecification.proto
