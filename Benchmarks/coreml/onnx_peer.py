"""The peer of the Core ML benchmark: a Core ML model converted to ONNX with onnxmltools and run
with onnxruntime, the way to run such a model on Linux without mlkit.

    onnx_peer.py convert MODEL.mlmodel OUT.onnx
    onnx_peer.py speed OUT.onnx [--loads N] [--calls N] TEXT...

`speed` prints one JSON object shaped as `CoreMLProbe speed` prints it: the median and fastest
load (an onnxruntime session) in milliseconds, and per text the microseconds of one call from
the text (lowercased, split at spaces, counted: the words of these sentences are the same as
mlkit's tokenizer gives) and from its word counts. onnxruntime runs on one thread, as mlkit's
single predictions do.

onnxmltools 1.16.0 converts Core ML models only after two repairs, made here in memory: its
Core ML parser imports `find_type_conversion`, which its `data_types` module no longer has, and
nothing imports the modules that register the Core ML shape calculators and converters.
"""
import json
import sys
import time
import warnings

warnings.filterwarnings("ignore")


def repaired_onnxmltools():
    import onnxmltools.convert.common.data_types as data_types

    def find_type_conversion(source_type, target_type):
        # What onnxmltools' Core ML parser expects: the operator that feeds a pipeline input
        # to a stage's input of another type.
        if type(source_type) == type(target_type):
            return "identity"
        if type(target_type) == data_types.FloatTensorType:
            return "imageToFloatTensor"
        raise ValueError("no conversion from %s to %s" % (source_type, target_type))

    data_types.find_type_conversion = find_type_conversion
    import onnxmltools.convert.coreml.operator_converters  # noqa: F401  registers the converters
    import onnxmltools.convert.coreml.shape_calculators  # noqa: F401  registers the shapes
    import onnxmltools
    return onnxmltools


def convert(model, out):
    import coremltools
    onnxmltools = repaired_onnxmltools()
    onnx_model = onnxmltools.convert_coreml(coremltools.utils.load_spec(model), "SentimentPolarity")
    with open(out, "wb") as handle:
        handle.write(onnx_model.SerializeToString())


def word_counts(text):
    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0.0) + 1.0
    return counts


def speed(path, loads, calls, texts):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1

    def session():
        return onnxruntime.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])

    load_times = []
    for _ in range(loads):
        start = time.perf_counter()
        model = session()
        load_times.append((time.perf_counter() - start) * 1e3)
    result = {"loads": loads, "calls": calls, "load_ms_median": sorted(load_times)[len(load_times) // 2],
              "load_ms_min": min(load_times), "texts": {}}
    for text in texts:
        counts = word_counts(text)
        for _ in range(1000):
            model.run(None, {"input": word_counts(text)})
        start = time.perf_counter()
        for _ in range(calls):
            model.run(None, {"input": word_counts(text)})
        from_text = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(calls):
            model.run(None, {"input": counts})
        from_counts = time.perf_counter() - start
        probabilities = model.run(None, {"input": counts})[1][0]
        entry = {"text_us": from_text / calls * 1e6, "counts_us": from_counts / calls * 1e6}
        entry.update({label: float(p) for label, p in probabilities.items()})
        result["texts"][text] = entry
    print(json.dumps(result, sort_keys=True))


def main(arguments):
    if arguments[:1] == ["convert"] and len(arguments) == 3:
        convert(arguments[1], arguments[2])
        return 0
    if arguments[:1] == ["speed"] and len(arguments) >= 2:
        loads, calls, rest = 30, 20000, []
        iterator = iter(arguments[2:])
        for argument in iterator:
            if argument == "--loads":
                loads = int(next(iterator))
            elif argument == "--calls":
                calls = int(next(iterator))
            else:
                rest.append(argument)
        speed(arguments[1], loads, calls, rest)
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
