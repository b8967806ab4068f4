"""A backend with an optimizer's realistic bug, for the suites' meta tests: ADAM_OPTIMIZER
without its bias correction (Alpha = 1), the NumPy reference's moments otherwise."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
from dmlspec.reference.layout import is_strided


class UncorrectedAdam(NumpyBackend):
    """ADAM_OPTIMIZER updating the parameters by LearningRate * M / (sqrt(V) + Epsilon), the
    bias correction sqrt(1 - Beta2^T) / (1 - Beta1^T) left out (packed tensors)."""

    name = "uncorrected-adam"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        desc = operator["desc"]
        strided = any(isinstance(v, Mapping) and is_strided(v) for v in desc.values())
        if str(operator["type"]).removeprefix("DML_OPERATOR_") != "ADAM_OPTIMIZER" or strided:
            return outputs
        with np.errstate(all="ignore"):
            m = np.asarray(outputs["OutputFirstMomentTensor"], np.float32)
            v = np.asarray(outputs["OutputSecondMomentTensor"], np.float32)
            x = np.asarray(inputs["InputParametersTensor"], np.float32)
            rate, epsilon = np.float32(desc["LearningRate"]), np.float32(desc["Epsilon"])
            updated = x - rate * m / (np.sqrt(v) + epsilon)
            kind = outputs["OutputParametersTensor"].dtype
            outputs["OutputParametersTensor"] = updated.astype(kind)
        return outputs
