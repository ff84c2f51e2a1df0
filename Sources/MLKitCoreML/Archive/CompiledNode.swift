import Foundation

/// One compiled `coremldata.bin` of a model archive, as far as its layout is known from the
/// reference archives (all integers little-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | the node's model type, as its field number in `Model` (200 pipelineClassifier, 202 pipeline, 603 dictVectorizer, 400 glmClassifier, …) |
/// | 4 | 4 | 1 |
/// | 8 | 12 | zero |
/// | 0x14 | 4 | 1 for a pipeline node, 0 for a leaf |
/// | 0x18 | 4 | zero |
/// | 0x1C | 8 | the length N of a table of names |
/// | 0x24 | N | the names (`spec` for a leaf) |
/// | 0x24 + N | 32 | 1 as a u64, then zero bytes |
///
/// Then a leaf holds its original `Model` protobuf, byte for byte, to the end of the file (at
/// 0x48, after the name `spec`). A pipeline holds a u64 length and a `ModelDescription` of that
/// length, then the number of its stages and its type again, as two u64s; its stages are the
/// nodes in the folders `model0/`, `model1/`, … beside the file.
///
/// Anything else is a damaged node (or the garbage a wrong key decrypts to).
struct CompiledNode {
    enum Content {
        /// A leaf's model.
        case leaf(SpecModel)
        /// A pipeline's type field number, description, and the number of stages it states.
        case pipeline(type: UInt32, description: SpecModelDescription, stages: Int?)
    }

    let content: Content

    /// The field numbers of the pipeline types.
    static let pipelineTypes: Set<UInt32> = [200, 201, 202]

    /// Parses a node's plain bytes.
    /// - Throws: ``CoreMLError`` (`malformedModel`) naming the entry and what is wrong.
    init(_ bytes: Data, entry: String) throws {
        let reader = ByteReader(bytes, entry: entry)
        let type = try reader.u32(at: 0, "its model type")
        guard type >= 200 && type < 4000 else {
            throw CoreMLError(.malformedModel, "entry '\(entry)': \(type) at offset 0 is not a model type")
        }
        guard try reader.u32(at: 4, "its version") == 1 else {
            throw CoreMLError(.malformedModel, "entry '\(entry)': version \(try reader.u32(at: 4, "")) at offset 4, not 1")
        }
        let isPipeline = Self.pipelineTypes.contains(type)
        guard try reader.u32(at: 0x14, "its kind") == (isPipeline ? 1 : 0) else {
            throw CoreMLError(.malformedModel, "entry '\(entry)': offset 0x14 does not say \(isPipeline ? "pipeline" : "leaf") "
                              + "for model type \(type)")
        }
        let names = try reader.length(at: 0x1C, "its table of names")
        var offset = 0x24 + names
        guard try reader.u64(at: offset, "the word after its names") == 1 else {
            throw CoreMLError(.malformedModel, "entry '\(entry)': unexpected word at offset \(hex(offset)), not 1")
        }
        offset += 32
        try reader.require(offset, "its header")
        guard isPipeline else {
            let model = try SpecificationReader.model(bytes.subdata(in: (bytes.startIndex + offset)..<bytes.endIndex),
                                                      what: "entry '\(entry)'")
            guard Self.fieldNumber(of: model) == type else {
                throw CoreMLError(.malformedModel, "entry '\(entry)': its header says model type \(type), but its model is "
                                  + (model.type == nil ? "of no type" : ModelType(model.type).name))
            }
            content = .leaf(model)
            return
        }
        let length = try reader.length(at: offset, "its model description")
        let start = offset + 8
        let description = try SpecificationReader.description(
            bytes.subdata(in: (bytes.startIndex + start)..<(bytes.startIndex + start + length)), what: "entry '\(entry)'")
        offset = start + length
        var stages: Int?
        if bytes.count - offset == 16 {
            let count = try reader.u64(at: offset, "its number of stages")
            guard try reader.u64(at: offset + 8, "its type") == UInt64(type) else {
                throw CoreMLError(.malformedModel, "entry '\(entry)': its last word does not repeat its model type \(type)")
            }
            stages = count <= UInt64(Limits.maximumArchiveEntries) ? Int(count) : Limits.maximumArchiveEntries + 1
        } else if bytes.count != offset {
            throw CoreMLError(.malformedModel, "entry '\(entry)': \(bytes.count - offset) unexpected bytes after the "
                              + "model description")
        }
        content = .pipeline(type: type, description: description, stages: stages)
    }

    /// The field number of a model's type in `Model`: what a node's header states.
    static func fieldNumber(of model: SpecModel) -> UInt32? {
        switch model.type {
        case nil: return nil
        case .pipelineClassifier: return 200
        case .pipelineRegressor: return 201
        case .pipeline: return 202
        case .glmRegressor: return 300
        case .supportVectorRegressor: return 301
        case .treeEnsembleRegressor: return 302
        case .neuralNetworkRegressor: return 303
        case .bayesianProbitRegressor: return 304
        case .glmClassifier: return 400
        case .supportVectorClassifier: return 401
        case .treeEnsembleClassifier: return 402
        case .neuralNetworkClassifier: return 403
        case .kNearestNeighborsClassifier: return 404
        case .neuralNetwork: return 500
        case .itemSimilarityRecommender: return 501
        case .mlProgram: return 502
        case .customModel: return 555
        case .linkedModel: return 556
        case .classConfidenceThresholding: return 560
        case .oneHotEncoder: return 600
        case .imputer: return 601
        case .featureVectorizer: return 602
        case .dictVectorizer: return 603
        case .scaler: return 604
        case .categoricalMapping: return 606
        case .normalizer: return 607
        case .arrayFeatureExtractor: return 609
        case .nonMaximumSuppression: return 610
        case .identity: return 900
        case .textClassifier: return 2000
        case .wordTagger: return 2001
        case .visionFeaturePrint: return 2002
        case .soundAnalysisPreprocessing: return 2003
        case .gazetteer: return 2004
        case .wordEmbedding: return 2005
        case .audioFeaturePrint: return 2006
        case .serializedModel: return 3000
        }
    }
}

/// Little-endian integers at offsets of a byte buffer, each read checked against its length.
struct ByteReader {
    let bytes: Data
    let entry: String

    init(_ bytes: Data, entry: String) {
        self.bytes = bytes
        self.entry = entry
    }

    /// Checks that the buffer has at least `end` bytes.
    func require(_ end: Int, _ what: String) throws {
        guard end >= 0 && end <= bytes.count else {
            throw CoreMLError(.malformedModel, "entry '\(entry)' is truncated: \(what) ends at byte \(end), "
                              + "past its end (\(bytes.count) bytes)")
        }
    }

    func u32(at offset: Int, _ what: String) throws -> UInt32 {
        try require(offset + 4, what)
        var value: UInt32 = 0
        for index in (0..<4).reversed() { value = value << 8 | UInt32(bytes[bytes.startIndex + offset + index]) }
        return value
    }

    func u64(at offset: Int, _ what: String) throws -> UInt64 {
        try require(offset + 8, what)
        var value: UInt64 = 0
        for index in (0..<8).reversed() { value = value << 8 | UInt64(bytes[bytes.startIndex + offset + index]) }
        return value
    }

    /// A u64 length at `offset`, checked to fit in the rest of the buffer after it.
    func length(at offset: Int, _ what: String) throws -> Int {
        let value = try u64(at: offset, what)
        guard value <= UInt64(bytes.count - offset - 8) else {
            throw CoreMLError(.malformedModel, "entry '\(entry)' is truncated or damaged: \(what) at offset \(hex(offset)) "
                              + "states \(value) bytes, but only \(bytes.count - offset - 8) follow")
        }
        return Int(value)
    }
}

/// `0x1c`.
func hex(_ value: Int) -> String { "0x" + String(value, radix: 16) }
