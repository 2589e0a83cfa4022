import numpy as np
import gpusort

keys = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
keys[:4] = [np.nan, -0.0, np.inf, 0.0]
result = gpusort.sort(keys)                      # a sorted copy, equal to NumPy's stable sort
assert np.array_equal(result, np.sort(keys, kind="stable"), equal_nan=True)
ids = np.arange(keys.size, dtype=np.uint32)      # values: any 4- or 8-byte dtype
top_keys, top_ids = gpusort.sort_by_key(keys, ids, descending=True)
assert np.isnan(top_keys[0]) and top_keys[1] == np.inf and top_ids[1] == 2
gpusort.sort_(keys)                              # in place
