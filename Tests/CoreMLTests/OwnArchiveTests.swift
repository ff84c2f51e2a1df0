import Foundation
@testable import MLKit
@testable import MLKitCoreML
import MLKitEncryption
import SwiftProtobuf
import TestSupport
import Testing

/// An exported model's specification, with its dictionary and feature vectorizers nested in a
/// pipeline of their own, as Apple's converters write them (the reference model has this shape).
func nestedSpecification(_ classifier: TextClassifier) throws -> SpecModel {
    var model = try SpecModel(serializedBytes: try classifier.coreMLModelData())
    guard case .pipelineClassifier(var pipelineClassifier) = model.type else { preconditionFailure() }
    let stages = pipelineClassifier.pipeline.models
    var inner = SpecModel()
    inner.specificationVersion = 1
    var vectorizers = SpecPipeline()
    vectorizers.models = Array(stages[0...1])
    inner.type = .pipeline(vectorizers)
    inner.description_p.input = stages[0].description_p.input
    inner.description_p.output = stages[1].description_p.output
    pipelineClassifier.pipeline.models = [inner] + stages[2...]
    model.type = .pipelineClassifier(pipelineClassifier)
    return model
}

/// The decryptor that the CLI would make from the key file of `key`.
func decryptor(_ key: ArchiveBuilder.Key) throws -> CoreMLArchiveDecryptor {
    let modelKey = try ModelKey(keyFileData: try key.keyFile())
    return { file, identifier in try ModelArchiveDecryption.decrypt(file, keyIdentifier: identifier, with: modelKey) }
}

@Suite("Model archives of the tests' own, plain and encrypted", .onOwnThreads)
struct OwnArchiveTests {
    static let classifier: TextClassifier = {
        // swiftlint:disable:next force_try
        try! TextClassifier(trainingData: Corpus.training(), parameters: .init(algorithm: .linearSVM))
    }()

    static let texts = Corpus.test().examples.prefix(40).map(\.text)

    static func expectSamePredictions(_ model: CoreMLModel) throws {
        let reference = try CoreMLModel(fileData: try classifier.coreMLModelData())
        for text in texts {
            #expect(try model.rankedLabels(for: text, maximumCount: 4).map(\.label) == (try reference.rankedLabels(for: text, maximumCount: 4).map(\.label)))
            let a = try model.predictedLabelHypotheses(for: text, maximumCount: 4)
            let b = try reference.predictedLabelHypotheses(for: text, maximumCount: 4)
            for label in Corpus.allLabels { #expect(a[label] == b[label]) }
        }
    }

    @Test("A plain archive, flat or with nested pipelines, predicts as the .mlmodel does")
    func plain() throws {
        let flat = try SpecModel(serializedBytes: try Self.classifier.coreMLModelData())
        for specification in [flat, try nestedSpecification(Self.classifier)] {
            let model = try CoreMLModel(fileData: try ArchiveBuilder.archive(of: specification), source: "own.mlarchive")
            try Self.expectSamePredictions(model)
            #expect(model.info.metadata == (try CoreMLModel(fileData: try Self.classifier.coreMLModelData())).info.metadata)
        }
    }

    @Test("An encrypted archive decrypts in memory with its key; without it, or with other material, it is refused")
    func encrypted() throws {
        let key = ArchiveBuilder.Key.random()
        let data = try ArchiveBuilder.archive(of: try nestedSpecification(Self.classifier), key: key)
        try Self.expectSamePredictions(try CoreMLModel(fileData: data, decryptor: try decryptor(key)))

        let missing = try #require(throws: CoreMLError.self) { try CoreMLModel(fileData: data, source: "own.mlarchive") }
        #expect(missing.code == .keyUnavailable)
        #expect(missing.description == "own.mlarchive: key unavailable: the archive is encrypted with key \(key.identifier) "
                + "and no key was given")

        let impostor = ArchiveBuilder.Key(identifier: key.identifier, material: key.material.map { $0 ^ 0x5A }, iv: key.iv)
        let wrong = try #require(throws: CoreMLError.self) {
            try CoreMLModel(fileData: data, source: "own.mlarchive", decryptor: try decryptor(impostor))
        }
        #expect(wrong.code == .wrongKey)
        #expect(wrong.description.hasPrefix("own.mlarchive: wrong key: entry 'coremldata.bin' does not decrypt to a model part with key \(key.identifier)"))
    }

    @Test("Every page of a large model's files decrypts: a hashed model of 2^16 buckets spans many pages")
    func manyPages() throws {
        let classifier = try hashedNaiveBayes(Corpus.training(), bits: 16)
        let key = ArchiveBuilder.Key.random()
        let specification = try SpecModel(serializedBytes: try classifier.coreMLModelData())
        let data = try ArchiveBuilder.archive(of: specification, key: key)
        let model = try CoreMLModel(fileData: data, decryptor: try decryptor(key))
        let plain = try CoreMLModel(fileData: try classifier.coreMLModelData())
        for text in Self.texts {
            #expect(try model.predictedLabelHypotheses(for: text, maximumCount: 4) == (try plain.predictedLabelHypotheses(for: text, maximumCount: 4)))
        }
    }
}
