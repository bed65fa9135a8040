"""The GLEU stage made from corpora: the first-stage model every tier scores with.

Corpora are read and split into sentences (`corpus`), negatives glued from word sequences or
given real errors (`negatives`), and an SVM or a ranking SVM fitted on their features (`svm`;
the way in is `train`, `fluency train`, which follows a shipped tier's recipe, `tiers`, and
carries that tier's heads over to the new stage, `carry`); the glue test (`glue`) and the
robustness sets (`robustness`) check it. The resources its features read are made here too: the
n-gram LM (`lm`, `fluency train-lm`), the constituency parser (`parser`, `fluency
train-parser`; its treebank and bracket scores `treebank`), SmolLM2's ONNX graph
(`neural_export`, `fluency export-neural`, built by the package `onnx_llama`;
checked by `neural_check` against `neural_trace`) and its unigram table (`neural_unigrams`).
"""

__all__ = [
    "carry",
    "corpus",
    "glue",
    "lm",
    "negatives",
    "neural_check",
    "neural_export",
    "neural_trace",
    "neural_unigrams",
    "parser",
    "robustness",
    "svm",
    "tiers",
    "train",
    "treebank",
]
