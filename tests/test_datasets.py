import numpy as np
import pytest

import pymc_knn as pk

EXPECTED = [
    (lambda: pk.datasets.load_ripley("train"), (250, 2), [125, 125]),
    (lambda: pk.datasets.load_ripley("test"), (1000, 2), [500, 500]),
    (lambda: pk.datasets.load_pima("train"), (200, 7), [132, 68]),  # 000 section 4: 68 diabetic
    (lambda: pk.datasets.load_pima("test"), (332, 7), [223, 109]),  # 109 diabetic
    (lambda: pk.datasets.load_glass(), (214, 9), [70, 76, 17, 51]),
    (lambda: pk.datasets.load_glass(coalesce=False), (214, 9), [70, 76, 17, 13, 9, 29]),
    (pk.datasets.load_crabs, (200, 5), [50, 50, 50, 50]),
    (pk.datasets.load_iris, (150, 4), [50, 50, 50]),
    (pk.datasets.load_wine, (178, 13), [59, 71, 48]),
]


@pytest.mark.parametrize("load, shape, counts", EXPECTED)
def test_loaders(load, shape, counts):
    X, y, features, classes = load()
    assert X.shape == shape and X.dtype == np.float64 and np.all(np.isfinite(X))
    assert y.dtype == np.int64 and np.bincount(y).tolist() == counts
    assert len(features) == shape[1] and len(classes) == len(counts)


def test_values_and_names():
    d = pk.datasets.load_ripley("train")
    np.testing.assert_allclose(d.X[0], [0.05100797, 0.16086164])
    assert d.feature_names == ("xs", "ys")
    assert pk.datasets.load_pima().class_names == ("No", "Yes")
    assert pk.datasets.load_crabs().feature_names == ("FL", "RW", "CL", "CW", "BD")


def test_bad_split():
    with pytest.raises(ValueError, match="split must be 'train' or 'test'"):
        pk.datasets.load_ripley("validation")
