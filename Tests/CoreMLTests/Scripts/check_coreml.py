"""Checks models that mlkit exported, with coremltools, for CoreMLToolsTests.

Usage: check_coreml.py JOB.json

JOB.json is a list of {"path": ..., "inputs": [dictionary, ...], "expected": [{label: p}, ...],
"tolerance": t (1e-9 when absent)}.
For each model: coremltools parses it (coremltools.utils.load_spec) and wraps it
(coremltools.models.MLModel); then this script evaluates the pipeline itself from the parsed
specification, with numpy, for each input, and compares the probabilities with what mlkit
computed. Prints one line per model and exits non-zero on the first disagreement.
"""
import json
import math
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import coremltools  # noqa: E402


def stages(model):
    """The leaf models of a pipeline, depth first."""
    kind = model.WhichOneof("Type")
    if kind in ("pipeline", "pipelineClassifier"):
        pipeline = model.pipeline if kind == "pipeline" else model.pipelineClassifier.pipeline
        return [leaf for stage in pipeline.models for leaf in stages(stage)]
    return [model]


def evaluate(spec, dictionary):
    """The probabilities of a pipelineClassifier (an export, or the reference model) for one
    input dictionary."""
    assert spec.WhichOneof("Type") == "pipelineClassifier", spec.WhichOneof("Type")
    assert spec.specificationVersion == 1
    x = None
    for stage in stages(spec):
        kind = stage.WhichOneof("Type")
        if kind == "dictVectorizer":
            mapping = stage.dictVectorizer
            integers = mapping.WhichOneof("Map") == "int64ToIndex"
            keys = mapping.int64ToIndex.vector if integers else mapping.stringToIndex.vector
            position = {key: index for index, key in enumerate(keys)}
            x = np.zeros(len(keys))
            for key, value in dictionary.items():
                key = int(key) if integers else key  # JSON keys are strings
                if key in position:
                    x[position[key]] = value
        elif kind == "featureVectorizer":
            assert sum(c.inputDimensions for c in stage.featureVectorizer.inputList) == len(x)
        elif kind == "scaler":
            scale = np.array(stage.scaler.scaleValue) if stage.scaler.scaleValue else 1.0
            shift = np.array(stage.scaler.shiftValue) if stage.scaler.shiftValue else 0.0
            x = scale * (x + shift)
        elif kind == "normalizer":
            assert stage.normalizer.normType == 2
            norm = math.sqrt(float(np.dot(x, x)))
            if norm > 0:
                x = x / norm
        elif kind == "glmClassifier":
            glm = stage.glmClassifier
            assert glm.postEvaluationTransform == 0
            weights = np.array([list(row.value) for row in glm.weights])
            z = weights @ x + np.array(glm.offset)
            labels = list(glm.stringClassLabels.vector)
            if len(labels) == 2:
                positive = 1 / (1 + math.exp(-z[0]))
                probabilities = [1 - positive, positive]
            elif glm.classEncoding == 0:
                scores = np.concatenate([[0.0], z])
                scores = np.exp(scores - scores.max())
                probabilities = list(scores / scores.sum())
            else:
                sigmoids = 1 / (1 + np.exp(-z))
                probabilities = list(sigmoids / sigmoids.sum())
            return dict(zip(labels, probabilities))
        else:
            raise AssertionError("unexpected stage " + kind)
    raise AssertionError("no glmClassifier")


def main():
    jobs = json.load(open(sys.argv[1]))
    for job in jobs:
        spec = coremltools.utils.load_spec(job["path"])
        coremltools.models.MLModel(spec)
        largest = 0.0
        for dictionary, expected in zip(job["inputs"], job["expected"]):
            probabilities = evaluate(spec, dictionary)
            for label, value in expected.items():
                largest = max(largest, abs(probabilities[label] - value))
        print("%s: loaded, %d inputs, largest difference %.3g" % (job["path"], len(job["inputs"]), largest))
        if largest > job.get("tolerance", 1e-9):
            print("mlkit and this evaluation disagree", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
