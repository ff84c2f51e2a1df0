import ArgumentParser
import Foundation
import MLKit

/// `mlkit evaluate`: metrics of a model on labelled data.
struct EvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Measure a model on labelled data: accuracy, per-class metrics, confusion matrix.",
        discussion: """
            A JSON Lines file (.jsonl, .ndjson) streams: it is read, parsed and measured on every core \
            at once, in memory bounded whatever its size; each record must lie on one line.

            A word tagger is measured on tagged sentences ({"tokens": [...], "labels": [...]} rows or \
            word/TAG text): token accuracy, entity or word F1, per-label metrics, confusion matrix.
            """
    )

    @Argument(help: "The model file: mlkit's, or a Core ML .mlmodel or .mlarchive.")
    var model: String

    @Argument(help: "Labelled data, in any format `mlkit train` reads.")
    var data: String

    @Option(help: "The key file for an encrypted model (.mlkitkey, or Apple's .mlmodelkey).")
    var key: String?

    @Option(help: "The field or column holding the text.")
    var textColumn: String = "text"

    @Option(help: "The field or column holding the label (a tagger's: the labels; default label, or labels).")
    var labelColumn: String?

    @Option(help: "A tagger's field holding the tokens.")
    var tokenColumn: String = "tokens"

    @Flag(help: "Print the metrics as JSON.")
    var json = false

    func run() throws {
        try reportingFailures {
            let url = URL(fileURLWithPath: model)
            let classifier: LoadedModel
            if ModelFileKind.isCoreML(url) {
                classifier = try LoadedModel.load(at: url, keyPath: key)
            } else {
                switch try loadAnyModel(at: url, keyPath: key) {
                case .textClassifier(let loaded): classifier = .mlkit(loaded)
                case .wordTagger(let tagger): return try evaluate(tagger)
                }
            }
            let reader = DatasetReader(textColumn: textColumn, labelColumn: labelColumn ?? "label")
            let dataURL = URL(fileURLWithPath: data)
            let metrics: ClassificationMetrics
            if DatasetFormat(fileExtension: dataURL.pathExtension) == .jsonLines {
                metrics = try streamingEvaluation(of: classifier, reading: reader)
            } else {
                let dataset = try reader.read(contentsOf: dataURL)
                guard !dataset.examples.isEmpty else {
                    throw MLKitError(.invalidDataset, "the dataset is empty", at: .init(file: data))
                }
                metrics = try classifier.evaluation(on: dataset)
            }
            if json {
                print(try jsonText(MetricsJSON(metrics)))
            } else {
                print(metrics.report, terminator: "")
            }
        }
    }
}

/// The JSON form of metrics, with the derived figures spelled out.
struct MetricsJSON: Encodable {
    let examples: Int
    let accuracy: Double
    let classificationError: Double
    let macroF1: Double
    let weightedF1: Double
    let topKAccuracy: [Double]
    let logLoss: Double?
    let perClass: [ClassificationMetrics.ClassMetrics]
    let labels: [String]
    let confusion: [[Int]]

    init(_ metrics: ClassificationMetrics) {
        examples = metrics.count
        accuracy = metrics.accuracy
        classificationError = metrics.classificationError
        macroF1 = metrics.macroF1
        weightedF1 = metrics.weightedF1
        topKAccuracy = metrics.topKAccuracy
        logLoss = metrics.logLoss
        perClass = metrics.perClass
        labels = metrics.labels
        confusion = metrics.confusion
    }
}
