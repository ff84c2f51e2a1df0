/// Turns a model specification into a ``Plan``, checking that its parts fit together: every
/// stage's inputs are the model's inputs or outputs of earlier stages, of the declared types
/// and sizes, and every stage's parameters are consistent (row counts, vector lengths, labels).
struct PlanCompiler {
    /// A feature in scope: the slot that holds it and what it holds.
    struct Binding {
        let slot: Int
        let kind: Kind
    }

    private var slotCount = 0
    private var steps: [Step] = []
    /// The step that writes each slot.
    private var producers: [Int: Int] = [:]

    /// The compiled plan, and the classifier stage that gives the model's predicted label, if
    /// any, with its step.
    struct Result {
        let plan: Plan
        let classifier: (stage: GLMClassifierStage, step: Int)?
    }

    /// Compiles a whole model.
    /// - Parameters:
    ///   - model: The specification.
    ///   - fileLength: The length of the file it was read from, which bounds expansions.
    /// - Throws: ``CoreMLError``: `invalidModel`, `unsupportedModelType` or `malformedModel`,
    ///   naming the stage and field.
    static func compile(_ model: SpecModel, fileLength: Int) throws -> Result {
        var compiler = PlanCompiler()
        let description = model.description_p
        guard !description.input.isEmpty else {
            throw CoreMLError(.invalidModel, "the model declares no inputs")
        }
        var scope: [String: Binding] = [:]
        var inputs: [Plan.Input] = []
        for feature in description.input {
            guard scope[feature.name] == nil else {
                throw CoreMLError(.invalidModel, "input '\(feature.name)' is declared twice")
            }
            let kind = try evaluableKind(feature, of: "the model")
            let slot = compiler.newSlot()
            scope[feature.name] = Binding(slot: slot, kind: kind)
            inputs.append(Plan.Input(name: feature.name, slot: slot, kind: kind, isOptional: feature.type.isOptional))
        }
        let produced = try compiler.compile(model, path: [], scope: scope, depth: 0)
        guard !description.output.isEmpty else { throw CoreMLError(.invalidModel, "the model declares no outputs") }
        var outputs: [Plan.Output] = []
        for feature in description.output {
            guard let binding = produced[feature.name] else {
                throw CoreMLError(.invalidModel, "output '\(feature.name)' is not produced by any stage")
            }
            outputs.append(Plan.Output(name: feature.name, slot: binding.slot, kind: binding.kind))
        }
        var classifier: (stage: GLMClassifierStage, step: Int)?
        let predicted = description.predictedFeatureName
        if let slot = produced[predicted]?.slot, let step = compiler.producers[slot],
           case .glmClassifier(let stage) = compiler.steps[step].operation {
            classifier = (stage, step)
        }
        let plan = Plan(inputs: inputs, outputs: outputs, steps: compiler.steps, slotCount: compiler.slotCount,
                        denseLimit: Limits.denseExpansion(forFileLength: fileLength))
        return Result(plan: plan, classifier: classifier)
    }

    private mutating func newSlot() -> Int {
        slotCount += 1
        return slotCount - 1
    }

    /// The name a message gives a stage: `stage 1.2 (featureVectorizer)`, or `the model (glmClassifier)`.
    static func stageName(_ path: [Int], _ type: String) -> String {
        path.isEmpty ? "the model (\(type))" : "stage \(path.map(String.init).joined(separator: ".")) (\(type))"
    }

    /// The kind of a declared feature.
    /// - Throws: `unsupportedModelType` for an image, a sequence or a state, which mlkit does
    ///   not evaluate; `malformedModel` for a bad shape.
    static func evaluableKind(_ feature: SpecFeatureDescription, of owner: String) throws -> Kind {
        let type = CoreMLFeatureType(feature.type)
        let evaluable: Kind?
        do {
            evaluable = try Kind(type, feature: feature.name)
        } catch let error as CoreMLError {
            throw CoreMLError(error.code, "\(owner): \(error.reason)")
        }
        guard let kind = evaluable else {
            throw CoreMLError(.unsupportedModelType, "\(owner): feature '\(feature.name)' is of type \(type), "
                              + "which mlkit does not evaluate")
        }
        return kind
    }

    /// Compiles `model` with the features of `scope` available, and returns the features it
    /// produces.
    private mutating func compile(_ model: SpecModel, path: [Int], scope: [String: Binding],
                                  depth: Int) throws -> [String: Binding] {
        let type = ModelType(model.type)
        let name = Self.stageName(path, type.name)
        switch model.type {
        case .pipeline(let pipeline):
            return try compilePipeline(pipeline, model.description_p, name: name, path: path, scope: scope, depth: depth)
        case .pipelineClassifier(let classifier):
            return try compilePipeline(classifier.pipeline, model.description_p, name: name, path: path, scope: scope,
                                       depth: depth)
        case .pipelineRegressor(let regressor):
            return try compilePipeline(regressor.pipeline, model.description_p, name: name, path: path, scope: scope,
                                       depth: depth)
        default:
            return try compileLeaf(model, type: type, name: name, scope: scope)
        }
    }

    private mutating func compilePipeline(_ pipeline: SpecPipeline, _ description: SpecModelDescription, name: String,
                                          path: [Int], scope: [String: Binding], depth: Int) throws -> [String: Binding] {
        guard depth < Limits.maximumPipelineDepth else {
            throw CoreMLError(.malformedModel, "\(name): pipelines nest more than \(Limits.maximumPipelineDepth) deep")
        }
        guard !pipeline.models.isEmpty else { throw CoreMLError(.invalidModel, "\(name): the pipeline has no stages") }
        var inner = scope
        if !path.isEmpty && !description.input.isEmpty {
            // A nested pipeline sees only the features it declares.
            inner = [:]
            for feature in description.input {
                inner[feature.name] = try Self.resolve(feature, in: scope, stage: name)
            }
        }
        var produced: [String: Binding] = [:]
        for (index, child) in pipeline.models.enumerated() {
            let outputs = try compile(child, path: path + [index + 1], scope: inner, depth: depth + 1)
            for (feature, binding) in outputs {
                inner[feature] = binding
                produced[feature] = binding
            }
        }
        guard !description.output.isEmpty else { return produced }
        var result: [String: Binding] = [:]
        for feature in description.output {
            guard let binding = inner[feature.name] else {
                throw CoreMLError(.invalidModel, "\(name): output '\(feature.name)' is not produced by any of its stages")
            }
            let declared = try Self.evaluableKind(feature, of: name)
            guard declared.accepts(binding.kind) else {
                throw CoreMLError(.invalidModel, "\(name): output '\(feature.name)' is declared as \(declared), "
                                  + "but its stages produce \(binding.kind)")
            }
            result[feature.name] = Binding(slot: binding.slot, kind: binding.kind.refined(by: declared))
        }
        return result
    }

    /// The binding of a stage's declared input, checked against what flows into it.
    static func resolve(_ feature: SpecFeatureDescription, in scope: [String: Binding], stage: String) throws -> Binding {
        guard let binding = scope[feature.name] else {
            throw CoreMLError(.invalidModel, "\(stage): input '\(feature.name)' is neither an input of the model "
                              + "nor produced by an earlier stage")
        }
        let declared = try evaluableKind(feature, of: stage)
        guard declared.accepts(binding.kind) else {
            throw CoreMLError(.invalidModel, "\(stage): input '\(feature.name)' is declared as \(declared), "
                              + "but \(binding.kind) flows into it")
        }
        return Binding(slot: binding.slot, kind: binding.kind.refined(by: declared))
    }

    private mutating func compileLeaf(_ model: SpecModel, type: ModelType, name: String,
                                      scope: [String: Binding]) throws -> [String: Binding] {
        let description = model.description_p
        var outputs: [(name: String, kind: Kind)] = []
        for feature in description.output {
            guard !outputs.contains(where: { $0.name == feature.name }) else {
                throw CoreMLError(.invalidModel, "\(name): output '\(feature.name)' is declared twice")
            }
            outputs.append((feature.name, try Self.evaluableKind(feature, of: name)))
        }
        let context = StageContext(name: name, description: description, scope: scope, outputs: outputs)
        let compiled: CompiledStage
        switch model.type {
        case .dictVectorizer(let spec): compiled = try DictVectorizerStage.compile(spec, context)
        case .featureVectorizer(let spec): compiled = try FeatureVectorizerStage.compile(spec, context)
        case .scaler(let spec): compiled = try ScalerStage.compile(spec, context)
        case .normalizer(let spec): compiled = try NormalizerStage.compile(spec, context)
        case .glmClassifier(let spec): compiled = try GLMClassifierStage.compile(spec, context)
        case .glmRegressor(let spec): compiled = try GLMRegressorStage.compile(spec, context)
        case .oneHotEncoder(let spec): compiled = try OneHotEncoderStage.compile(spec, context)
        case .imputer(let spec): compiled = try ImputerStage.compile(spec, context)
        case .categoricalMapping(let spec): compiled = try CategoricalMappingStage.compile(spec, context)
        case .arrayFeatureExtractor(let spec): compiled = try ArrayFeatureExtractorStage.compile(spec, context)
        case .identity: compiled = try IdentityStage.compile(context)
        default: throw type.refusal(stage: name)
        }
        var produced: [String: Binding] = [:]
        var outputSlots: [Int] = []
        for (output, actual) in zip(outputs, compiled.outputKinds) {
            guard output.kind.accepts(actual) else {
                throw CoreMLError(.invalidModel, "\(name): output '\(output.name)' is declared as \(output.kind), "
                                  + "but the stage produces \(actual)")
            }
            guard scope[output.name] == nil else {
                throw CoreMLError(.invalidModel, "\(name): output '\(output.name)' has the name of an earlier feature")
            }
            let slot = newSlot()
            outputSlots.append(slot)
            produced[output.name] = Binding(slot: slot, kind: actual.refined(by: output.kind))
            producers[slot] = steps.count
        }
        steps.append(Step(stage: name, operation: compiled.operation, inputs: compiled.inputSlots, outputs: outputSlots))
        return produced
    }
}

/// What compiling one stage gives: its operation, the slots it reads, and the kind of each
/// declared output, in the order of the description's outputs.
struct CompiledStage {
    let operation: Operation
    let inputSlots: [Int]
    let outputKinds: [Kind]
}

/// A leaf stage's declared features, for its compiler.
struct StageContext {
    /// `stage 1.2 (featureVectorizer)`.
    let name: String
    let description: SpecModelDescription
    let scope: [String: PlanCompiler.Binding]
    /// The declared outputs, in order.
    let outputs: [(name: String, kind: Kind)]

    /// An `invalidModel` error naming the stage and `field`.
    func invalid(_ field: String?, _ reason: String) -> CoreMLError {
        CoreMLError(.invalidModel, "\(name): " + (field.map { "\($0): " } ?? "") + reason)
    }

    /// The stage's one declared input, resolved.
    func singleInput() throws -> (name: String, binding: PlanCompiler.Binding) {
        guard description.input.count == 1, let feature = description.input.first else {
            throw invalid(nil, "expected one input, found \(description.input.count)")
        }
        return (feature.name, try PlanCompiler.resolve(feature, in: scope, stage: name))
    }

    /// The stage's declared outputs, checked to be `count`.
    func requireOutputs(_ count: Int) throws {
        guard outputs.count == count else {
            throw invalid(nil, "expected \(count) output\(count == 1 ? "" : "s"), found \(outputs.count)")
        }
    }
}
