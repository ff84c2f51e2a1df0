import Foundation
@testable import MLKit
@testable import MLKitCoreML
import SwiftProtobuf
import TestSupport
import Testing
import ZIPFoundation

/// Small specifications that the tests make wrong on purpose.
enum Specs {
    static let int64Dictionary = CoreMLExporter.dictionaryType(stringKeys: false)
    static let stringDictionary = CoreMLExporter.dictionaryType(stringKeys: true)
    static func array(_ count: Int) -> SpecFeatureType { CoreMLExporter.arrayType(count) }
    static let string = CoreMLExporter.stringType

    /// A stage.
    static func stage(_ type: SpecModel.OneOf_Type, _ inputs: [(String, SpecFeatureType)],
                      _ outputs: [(String, SpecFeatureType)]) -> SpecModel {
        CoreMLExporter.stage(type, inputs: inputs, outputs: outputs)
    }

    /// A pipeline classifier of `stages`, taking `input` and giving `classLabel` and `classProbability`.
    static func classifier(_ stages: [SpecModel], input: (String, SpecFeatureType) = ("input", stringDictionary)) -> SpecModel {
        var pipeline = SpecPipeline()
        pipeline.models = stages
        var pipelineClassifier = SpecPipelineClassifier()
        pipelineClassifier.pipeline = pipeline
        var model = stage(.pipelineClassifier(pipelineClassifier), [input],
                          [("classLabel", string), ("classProbability", stringDictionary)])
        model.description_p.predictedFeatureName = "classLabel"
        model.description_p.predictedProbabilitiesName = "classProbability"
        return model
    }

    static func dictVectorizer(_ keys: [String], output: String = "sparse") -> SpecModel {
        var vectorizer = SpecDictVectorizer()
        var vector = SpecStringVector()
        vector.vector = keys
        vectorizer.map = .stringToIndex(vector)
        return stage(.dictVectorizer(vectorizer), [("input", stringDictionary)], [(output, int64Dictionary)])
    }

    static func featureVectorizer(_ dimension: UInt64, input: String = "sparse", output: String = "vector",
                                  declared: Int? = nil) -> SpecModel {
        var vectorizer = SpecFeatureVectorizer()
        var column = SpecFeatureVectorizer.InputColumn()
        column.inputColumn = input
        column.inputDimensions = dimension
        vectorizer.inputList = [column]
        return stage(.featureVectorizer(vectorizer), [(input, int64Dictionary)], [(output, array(declared ?? Int(dimension)))])
    }

    static func glm(rows: [[Double]], labels: [String], encoding: SpecGLMClassifier.ClassEncoding = .oneVsRest,
                    probit: Bool = false, input: String = "vector", inputSize: Int? = nil) -> SpecModel {
        var glm = SpecGLMClassifier()
        glm.weights = rows.map { row in
            var array = SpecGLMClassifier.DoubleArray()
            array.value = row
            return array
        }
        glm.offset = rows.map { _ in 0.5 }
        glm.classEncoding = encoding
        glm.postEvaluationTransform = probit ? .probit : .logit
        var vector = SpecStringVector()
        vector.vector = labels
        glm.classLabels = .stringClassLabels(vector)
        var model = stage(.glmClassifier(glm), [(input, array(inputSize ?? rows.first?.count ?? 0))],
                          [("classLabel", string), ("classProbability", stringDictionary)])
        model.description_p.predictedFeatureName = "classLabel"
        model.description_p.predictedProbabilitiesName = "classProbability"
        return model
    }

    /// A consistent three-word model.
    static let valid = classifier([dictVectorizer(["good", "bad", "fine"]), featureVectorizer(3),
                                   glm(rows: [[1, -1, 0.25]], labels: ["Neg", "Pos"])])

    static func data(_ model: SpecModel) throws -> Data { try model.serializedBytes() }
}

/// The error of loading `data` as `name`.
func loadError(_ data: Data, _ name: String = "bad.mlmodel") -> CoreMLError? {
    do {
        _ = try CoreMLModel(fileData: data, source: name)
        return nil
    } catch let error as CoreMLError {
        return error
    } catch {
        Issue.record("not a CoreMLError: \(error)")
        return nil
    }
}

@Suite("Bad .mlmodel files give clear errors, never a crash", .onOwnThreads)
struct MalformedModelTests {
    @Test("The small valid model the cases start from runs")
    func valid() throws {
        let model = try CoreMLModel(fileData: try Specs.data(Specs.valid))
        #expect(try model.predictedLabel(forWordCounts: ["good": 2, "unknown": 5]) == "Pos")
        let p = try model.predictedLabelHypotheses(forWordCounts: ["good": 1, "bad": 1, "fine": 2], maximumCount: 2)["Pos"]!
        #expect(abs(p - 1 / (1 + exp(-(1 - 1 + 0.5 + 0.5)))) < 1e-15)
    }

    @Test("A truncated .mlmodel names the file and the damage")
    func truncated() throws {
        let data = try Specs.data(Specs.valid)
        var seen = Set<String>()
        for length in stride(from: 1, to: data.count, by: 1) {
            guard let error = loadError(data.prefix(length)) else { continue }
            #expect(error.file == "bad.mlmodel")
            #expect([.malformedModel, .invalidModel].contains(error.code), "\(error)")
            seen.insert(error.reason)
        }
        #expect(seen.contains("the file is not a Core ML model, or is truncated or damaged: the protobuf ends in the middle of a field"))
    }

    @Test("Garbled bytes, an empty file and text are not models")
    func garbled() throws {
        #expect(loadError(Data())?.reason == "the file is not a Core ML model: it has neither a specification version nor a model type")
        #expect(loadError(Data("hello, world".utf8))?.code == .malformedModel)
        var generator = SeededGenerator(seed: 0x6D6C_6B69_74)
        for _ in 0..<200 {
            let bytes = Data((0..<Int.random(in: 1...400, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            if let error = loadError(bytes) { #expect(error.file == "bad.mlmodel") }
        }
    }

    @Test("A file larger than a protobuf can hold is refused before it is read")
    func oversized() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("huge.mlmodel")
        // A sparse file: its length is 2^31 bytes, its blocks are not written.
        try Specs.data(Specs.valid).write(to: url)
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 1 << 31)
        try handle.close()
        let error = try #require(throws: CoreMLError.self) { try CoreMLModel(contentsOf: url) }
        #expect(error.code == .malformedModel)
        #expect(error.description == "\(url.path): the file has 2147483648 bytes, more than the 2147483647 a Core ML model can hold")
    }

    @Test("Model types mlkit does not run are refused by name; Apple's NLP models are described")
    func unsupportedTypes() throws {
        var network = Specs.stage(.neuralNetwork(SpecOpaque()), [("image", Specs.array(3))], [("out", Specs.array(3))])
        network.specificationVersion = 4
        let error = loadError(try Specs.data(network))
        #expect(error?.code == .unsupportedModelType)
        #expect(error?.reason.hasPrefix("the model (neuralNetwork): mlkit does not evaluate neuralNetwork models") == true)

        var nl = SpecNaturalLanguageModel()
        nl.revision = 1
        nl.language = "en"
        nl.modelParameterData = Data(repeating: 7, count: 100)
        nl.stringClassLabels.vector = ["Tech", "US Politics"]
        var textClassifier = Specs.stage(.textClassifier(nl), [("text", Specs.string)], [("label", Specs.string)])
        textClassifier.specificationVersion = 3
        textClassifier.description_p.metadata.author = "Create ML"
        let refusal = loadError(try Specs.data(textClassifier))
        #expect(refusal?.code == .unsupportedModelType)
        #expect(refusal?.reason == "the model (textClassifier): Apple's textClassifier keeps its weights in a blob whose layout "
                + "Apple has not published, so mlkit cannot run it; `mlkit info` shows its description, labels, language and revision")
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Headlines.mlmodel")
        try Specs.data(textClassifier).write(to: url)
        let info = try CoreMLModel.info(contentsOf: url)
        #expect(info.modelType == "textClassifier")
        #expect(info.naturalLanguage == CoreMLModelInfo.NaturalLanguageModel(type: "textClassifier", revision: 1, language: "en",
                                                                            labels: ["Tech", "US Politics"], parameterBytes: 100))
        #expect(info.labels == ["Tech", "US Politics"])
        #expect(info.metadata.author == "Create ML")
        let cli = try mlkit(["info", url.path])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(cli.stdout.contains("language            en\nrevision            1\n"))
        #expect(cli.stdout.contains("mlkit runs it       no: the model (textClassifier): Apple's textClassifier keeps its weights"))
        let predict = try mlkit(["predict", "--model", url.path, "hello"])
        #expect(predict.status == 65)
        #expect(predict.stderr.hasPrefix("mlkit: error: \(url.path): the model (textClassifier): Apple's textClassifier keeps"))
    }

    @Test("Inconsistent pipelines are refused, naming the stage and the field", arguments: [
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2, input: "elsewhere"),
                           Specs.glm(rows: [[1, 2]], labels: ["x", "y"])]),
         "stage 2 (featureVectorizer): inputList[0] 'elsewhere': is neither an input of the model nor produced by an earlier stage"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                           Specs.glm(rows: [[1, 2]], labels: ["x", "y"], input: "missing")]),
         "stage 3 (glmClassifier): input 'missing' is neither an input of the model nor produced by an earlier stage"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                           Specs.glm(rows: [[1, 2, 3]], labels: ["x", "y"], inputSize: 2)]),
         "stage 3 (glmClassifier): weights: rows of 3 weights for an input of 2 elements"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                           Specs.glm(rows: [[1, 2]], labels: ["x", "y"], inputSize: 3)]),
         "stage 3 (glmClassifier): input 'vector' is declared as an array of 3, but an array of 2 flows into it"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                           Specs.glm(rows: [[1, 2], [3, 4], [5, 6]], labels: ["x", "y", "z"], encoding: .referenceClass)]),
         "stage 3 (glmClassifier): weights: 3 rows for 3 labels with ReferenceClass, which needs 2"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                           Specs.glm(rows: [[1, 2], [3, 4]], labels: ["x", "y"])]),
         "stage 3 (glmClassifier): weights: 2 rows for 2 labels with OneVsRest, which needs 1"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                           Specs.glm(rows: [[1, 2], [3, 4], [5, 6]], labels: ["x", "y", "z"], probit: true)]),
         "stage 3 (glmClassifier): postEvaluationTransform: Probit takes two labels, not 3"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                           Specs.glm(rows: [[1, .nan]], labels: ["x", "y"])]),
         "stage 3 (glmClassifier): weights[0]: value 1 is nan, not a finite number"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b", "a"]), Specs.featureVectorizer(3),
                           Specs.glm(rows: [[1, 2, 3]], labels: ["x", "y"])]),
         "stage 1 (dictVectorizer): vocabulary: the key \"a\" is listed twice (entries 0 and 2)"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(1 << 40, declared: 2),
                           Specs.glm(rows: [[1, 2]], labels: ["x", "y"])]),
         "stage 2 (featureVectorizer): inputList[0] 'sparse': inputDimensions 1099511627776 is outside 1...2147483647"),
        (Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                           Specs.glm(rows: [[1, 2]], labels: ["x", "x"])]),
         "stage 3 (glmClassifier): classLabels: a label is listed twice"),
    ])
    func inconsistent(model: SpecModel, reason: String) throws {
        let error = loadError(try Specs.data(model))
        #expect(error?.code == .invalidModel)
        #expect(error?.reason == reason)
        #expect(error?.file == "bad.mlmodel")
    }

    @Test("An array shape too large to hold is a malformed model, naming the stage and feature")
    func hugeShape() throws {
        let model = Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2, declared: 1 << 40),
                                      Specs.glm(rows: [[1, 2]], labels: ["x", "y"])])
        let error = loadError(try Specs.data(model))
        #expect(error?.code == .malformedModel)
        #expect(error?.reason == "stage 2 (featureVectorizer): feature 'vector': its shape [1099511627776] has more than "
                + "2147483647 elements")
    }

    @Test("A model whose output is not produced, or that declares no inputs, is refused")
    func missingFeatures() throws {
        var model = Specs.valid
        model.description_p.output[1].name = "scores"
        #expect(loadError(try Specs.data(model))?.reason
                == "the model (pipelineClassifier): output 'scores' is not produced by any of its stages")
        model = Specs.valid
        model.description_p.input = []
        #expect(loadError(try Specs.data(model))?.reason == "the model declares no inputs")
    }

    @Test("Pipelines nested too deep are refused, by mlkit's limit or by the protobuf's")
    func deepNesting() throws {
        func nested(_ depth: Int) -> SpecModel {
            var model = Specs.valid
            for _ in 0..<depth {
                var pipeline = SpecPipeline()
                pipeline.models = [model]
                var outer = Specs.stage(.pipeline(pipeline), [("input", Specs.stringDictionary)],
                                        [("classLabel", Specs.string), ("classProbability", Specs.stringDictionary)])
                outer.description_p.predictedFeatureName = "classLabel"
                model = outer
            }
            return model
        }
        #expect(try CoreMLModel(fileData: try Specs.data(nested(10))).predictedLabel(forWordCounts: ["good": 1]) == "Pos")
        #expect(loadError(try Specs.data(nested(40)))?.reason.hasSuffix("pipelines nest more than 32 deep") == true)
        #expect(loadError(try Specs.data(nested(120)))?.reason
                == "the file is not a Core ML model, or is truncated or damaged: messages nest deeper than the limit of 100")
    }

    @Test("A stage that would expand a huge sparse array fails the prediction instead of allocating")
    func denseExpansion() throws {
        var scaler = SpecScaler()
        scaler.shiftValue = [1]
        let dimension = 1 << 30
        let model = Specs.stage(.pipeline({
            var pipeline = SpecPipeline()
            pipeline.models = [Specs.featureVectorizer(UInt64(dimension), input: "input"),
                               Specs.stage(.scaler(scaler), [("vector", Specs.array(dimension))], [("shifted", Specs.array(dimension))])]
            return pipeline
        }()), [("input", Specs.int64Dictionary)], [("shifted", Specs.array(dimension))])
        let loaded = try CoreMLModel(fileData: try Specs.data(model))
        let error = try #require(throws: CoreMLError.self) { try loaded.prediction(from: ["input": .int64Dictionary([3: 1])]) }
        #expect(error.code == .invalidModel)
        #expect(error.reason == "stage 2 (scaler): it would expand a sparse array of 1073741824 elements, more than the 1048576 "
                + "this model's size allows")
    }

    @Test("A sparse array output too large for the file is refused instead of expanded")
    func hugeSparseOutput() throws {
        // A file of under 200 bytes that declares an output of 2^30 doubles (8 GiB once expanded).
        let dimension = 1 << 30
        let model = Specs.stage(.pipeline({
            var pipeline = SpecPipeline()
            pipeline.models = [Specs.featureVectorizer(UInt64(dimension), input: "input")]
            return pipeline
        }()), [("input", Specs.int64Dictionary)], [("vector", Specs.array(dimension))])
        let data = try Specs.data(model)
        #expect(data.count < 200)
        let loaded = try CoreMLModel(fileData: data)
        let error = try #require(throws: CoreMLError.self) { try loaded.prediction(from: ["input": .int64Dictionary([3: 1])]) }
        #expect(error.code == .invalidModel)
        #expect(error.reason == "output 'vector': it would expand a sparse array of 1073741824 elements, more than the "
                + "1048576 this model's size allows")
    }

    @Test("Prediction inputs of the wrong type, size or key are refused, naming the input")
    func badInputs() throws {
        let model = try CoreMLModel(fileData: try Specs.data(Specs.valid))
        #expect(throws: CoreMLError(.invalidInput, "missing input 'input' (a dictionary with string keys)")) {
            try model.prediction(from: [:])
        }
        #expect(throws: CoreMLError(.invalidInput, "input 'input': expected a dictionary with string keys, got a string")) {
            try model.prediction(from: ["input": .string("good")])
        }
        let outputs = try model.prediction(from: ["input": .stringDictionary(["good": 1])])
        #expect(outputs["classLabel"] == .string("Pos"))
    }
}
