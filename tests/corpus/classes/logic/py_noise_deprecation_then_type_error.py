import warnings

def old_total(items):
    warnings.warn("old_total() is deprecated; use total() (network timeouts are retried there)", DeprecationWarning, stacklevel=2)
    return sum(items)

print(old_total([1, 2, "3"]))
