public import Foundation
import MLKit
import MLKitCoreML

/// The Core ML seeds: every model that mlkit's exporter writes, and hand-built models of each
/// classic type that mlkit evaluates (the shapes of `Tests/CoreMLTests`' own models), written
/// with ``Protobuf``.
public enum CoreMLSeeds {
    /// The `.mlmodel` seeds, by file name.
    public static func models() throws -> [String: Data] {
        var result = handBuilt()
        // Not the model over 2^24 buckets: its export is 333 MB.
        for (name, file) in try Seeds.smallModels()
            where (name.hasSuffix("-v3.mlkit") || name.hasSuffix("-hashed.mlkit")) && !name.hasPrefix("stored-rows") {
            guard let classifier = try? TextClassifier(modelFileData: file, source: name),
                  let exported = try? classifier.coreMLModelData() else { continue }
            result["exported-" + name.replacingOccurrences(of: ".mlkit", with: ".mlmodel")] = exported
        }
        return result
    }

    /// The model archive seeds of the archive harness, each behind its choice byte: the archive
    /// of every ``models()`` seed as a zip (stored and deflated), read plain (choice 0) and
    /// with the known key (choice 3) once encrypted; and as a container of files, plain
    /// (choice 1) and to encrypt (choice 2).
    public static func archives() throws -> [String: Data] {
        var result: [String: Data] = [:]
        for (name, model) in try models() {
            guard let files = CoreMLLayout.archiveFiles(of: model) else { continue }
            let base = name.replacingOccurrences(of: ".mlmodel", with: "")
            result["zip-\(base)"] = Data([0]) + CoreMLLayout.zip(files, deflate: false)
            result["deflated-\(base)"] = Data([0]) + CoreMLLayout.zip(files, deflate: true)
            result["container-\(base)"] = Data([1]) + CoreMLLayout.container(files)
            result["to-encrypt-\(base)"] = Data([2]) + CoreMLLayout.container(files)
            result["encrypted-\(base)"] = Data([3]) + CoreMLLayout.zip(CoreMLLayout.encrypted(files), deflate: true)
        }
        return result
    }

    // MARK: Hand-built models

    typealias P = Protobuf

    static func int64() -> Data { P.bytes(1, Data()) }
    static func double() -> Data { P.bytes(2, Data()) }
    static func string() -> Data { P.bytes(3, Data()) }
    static func array(_ count: Int64) -> Data { P.bytes(5, P.ints(1, [count]) + P.int(2, 65600)) }
    static func stringDictionary() -> Data { P.bytes(6, P.bytes(2, Data())) }
    static func int64Dictionary() -> Data { P.bytes(6, P.bytes(1, Data())) }

    /// A `FeatureDescription`.
    static func feature(_ name: String, _ type: Data, optional: Bool = false) -> Data {
        P.string(1, name) + P.bytes(3, type + (optional ? P.int(1000, 1) : Data()))
    }

    /// A `Model`: its version, description and the message of its type.
    static func model(_ type: Int, _ body: Data, inputs: [Data], outputs: [Data], predicted: String? = nil,
                      probabilities: String? = nil, metadata: Data? = nil, version: Int64 = 1) -> Data {
        var description = inputs.reduce(Data()) { $0 + P.bytes(1, $1) } + outputs.reduce(Data()) { $0 + P.bytes(10, $1) }
        if let predicted { description += P.string(11, predicted) }
        if let probabilities { description += P.string(12, probabilities) }
        if let metadata { description += P.bytes(100, metadata) }
        return P.int(1, version) + P.bytes(2, description) + P.bytes(type, body)
    }

    /// A pipeline of `stages`: type 200 (classifier), 201 (regressor) or 202.
    static func pipeline(_ type: Int, _ stages: [Data], names: [String] = []) -> Data {
        let pipeline = stages.reduce(Data()) { $0 + P.bytes(1, $1) } + names.reduce(Data()) { $0 + P.string(2, $1) }
        return type == 202 ? pipeline : P.bytes(1, pipeline)
    }

    static func doubleArray(_ values: [Double]) -> Data { P.doubles(1, values) }
    static func strings(_ values: [String]) -> Data { values.reduce(Data()) { $0 + P.string(1, $1) } }

    /// One model of each type mlkit evaluates, in pipelines as the tests build them, and one of
    /// a type it only describes.
    static func handBuilt() -> [String: Data] {
        var models: [String: Data] = [:]
        // scaler → normalizer → glmRegressor, as a pipelineRegressor.
        let regressorStages = [
            model(604, P.doubles(1, [1, 2, 3]) + P.doubles(2, [0.5, 0.25, 2]),
                  inputs: [feature("x", array(3))], outputs: [feature("scaled", array(3))]),
            model(607, P.int(1, 2), inputs: [feature("scaled", array(3))], outputs: [feature("normalized", array(3))]),
            model(300, P.bytes(1, doubleArray([0.1, -0.2, 0.3])) + P.doubles(2, [0.5]),
                  inputs: [feature("normalized", array(3))], outputs: [feature("y", double())]),
        ]
        let regressor = model(201, pipeline(201, regressorStages, names: ["scale", "norm", "glm"]),
                              inputs: [feature("x", array(3))], outputs: [feature("y", double())], predicted: "y",
                              metadata: P.string(1, "a regressor") + P.string(2, "1.0") + P.string(3, "mlkit") + P.string(4, "MIT")
                                + P.bytes(100, P.string(1, "purpose") + P.string(2, "fuzzing")), version: 4)
        models["regressor.mlmodel"] = regressor
        // categoricalMapping → oneHotEncoder → arrayFeatureExtractor, as a pipeline.
        let mapping = P.bytes(1, [("red", 0), ("green", 1), ("blue", 2)].reduce(Data()) {
            $0 + P.bytes(1, P.string(1, $1.0) + P.int(2, $1.1))
        }) + P.int(102, -1)
        let categorical = model(202, pipeline(202, [
            model(606, mapping, inputs: [feature("color", string())], outputs: [feature("code", int64())]),
            model(600, P.bytes(2, P.ints(1, [0, 1, 2])) + P.int(11, 1), inputs: [feature("code", int64())],
                  outputs: [feature("onehot", array(3))]),
            model(609, P.ints(1, [0, 2]), inputs: [feature("onehot", array(3))], outputs: [feature("picked", array(2))]),
        ]), inputs: [feature("color", string())], outputs: [feature("picked", array(2))], version: 2)
        models["categorical.mlmodel"] = categorical
        // An int64 → string mapping and a string one-hot encoder, each on its own.
        models["int64-mapping.mlmodel"] = model(606, P.bytes(2, [(7, "seven"), (-3, "minus three")].reduce(Data()) {
            $0 + P.bytes(1, P.int(1, $1.0) + P.string(2, $1.1))
        }) + P.string(101, "unknown"), inputs: [feature("n", int64())], outputs: [feature("word", string())])
        models["string-onehot.mlmodel"] = model(600, P.bytes(1, strings(["a", "b", "c"])) + P.int(11, 1),
                                                inputs: [feature("s", string())], outputs: [feature("v", array(3))])
        // Imputers of a double, a string and an array.
        models["imputer-double.mlmodel"] = model(601, P.double(1, 0.5) + P.double(11, -1),
                                                 inputs: [feature("v", double(), optional: true)], outputs: [feature("filled", double())])
        models["imputer-string.mlmodel"] = model(601, P.string(3, "unknown") + P.string(13, ""),
                                                 inputs: [feature("s", string(), optional: true)], outputs: [feature("filled", string())])
        models["imputer-array.mlmodel"] = model(601, P.bytes(4, P.doubles(1, [1, 2, 3])),
                                                inputs: [feature("a", array(3), optional: true)], outputs: [feature("filled", array(3))])
        models["identity.mlmodel"] = model(900, Data(), inputs: [feature("a", double())], outputs: [feature("b", double())])
        // dictVectorizer (int64 keys) → featureVectorizer → glmClassifier (int64 labels, OneVsRest).
        let int64Classifier = model(200, pipeline(200, [
            model(603, P.bytes(2, P.ints(1, [3, 5, 7])), inputs: [feature("input", int64Dictionary())],
                  outputs: [feature("sparse", array(3))]),
            model(602, P.bytes(1, P.string(1, "sparse") + P.int(2, 3)), inputs: [feature("sparse", array(3))],
                  outputs: [feature("vector", array(3))]),
            model(400, P.bytes(1, doubleArray([1, -1, 0.5])) + P.bytes(1, doubleArray([-1, 1, 0.25]))
                    + P.bytes(1, doubleArray([0, 0.5, -2])) + P.doubles(2, [0.1, -0.1, 0])
                    + P.int(4, 1) + P.bytes(101, P.ints(1, [10, 20, 30])),
                  inputs: [feature("vector", array(3))],
                  outputs: [feature("classLabel", int64()), feature("classProbability", int64Dictionary())],
                  predicted: "classLabel", probabilities: "classProbability"),
        ]), inputs: [feature("input", int64Dictionary())],
            outputs: [feature("classLabel", int64()), feature("classProbability", int64Dictionary())],
            predicted: "classLabel", probabilities: "classProbability")
        models["int64-classifier.mlmodel"] = int64Classifier
        // dictVectorizer (words) → featureVectorizer → glmClassifier (three labels, ReferenceClass).
        let words = ["rain", "goal", "eggs", "stock"]
        models["word-classifier.mlmodel"] = model(200, pipeline(200, [
            model(603, P.bytes(1, strings(words)), inputs: [feature("text", stringDictionary())], outputs: [feature("sparse", array(4))]),
            model(602, P.bytes(1, P.string(1, "sparse") + P.int(2, 4)), inputs: [feature("sparse", array(4))],
                  outputs: [feature("vector", array(4))]),
            model(400, P.bytes(1, doubleArray([1, -1, 0.5, 0])) + P.bytes(1, doubleArray([-1, 1, 0.25, 2])) + P.doubles(2, [0.1, -0.1])
                    + P.bytes(100, strings(["weather", "sports", "cooking"])),
                  inputs: [feature("vector", array(4))],
                  outputs: [feature("label", string()), feature("probabilities", stringDictionary())],
                  predicted: "label", probabilities: "probabilities"),
        ]), inputs: [feature("text", stringDictionary())],
            outputs: [feature("label", string()), feature("probabilities", stringDictionary())],
            predicted: "label", probabilities: "probabilities")
        // A glmClassifier on an array, without a pipeline, probit.
        models["array-classifier.mlmodel"] = model(400, P.bytes(1, doubleArray([0.5, -0.5])) + P.doubles(2, [0.25]) + P.int(3, 1)
                                                     + P.bytes(100, strings(["no", "yes"])),
                                                   inputs: [feature("features", array(2))],
                                                   outputs: [feature("label", string()), feature("probabilities", stringDictionary())],
                                                   predicted: "label", probabilities: "probabilities")
        // A pipeline inside a pipeline.
        let identityOfY = model(900, Data(), inputs: [feature("y", double())], outputs: [feature("z", double())])
        models["nested.mlmodel"] = model(202, pipeline(202, [regressor, identityOfY]),
                                         inputs: [feature("x", array(3))], outputs: [feature("z", double())])
        // Apple's natural-language text classifier: described, not evaluated.
        models["text-classifier.mlmodel"] = model(2000, P.int(1, 1) + P.string(10, "en") + P.bytes(100, Data(repeating: 7, count: 64))
                                                    + P.bytes(200, strings(["Neg", "Pos"])),
                                                  inputs: [feature("text", string())], outputs: [feature("label", string())],
                                                  predicted: "label", version: 3)
        return models
    }
}
