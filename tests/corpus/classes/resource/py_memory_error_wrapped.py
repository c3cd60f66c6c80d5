import resource
resource.setrlimit(resource.RLIMIT_AS, (300 * 1024 * 1024, 300 * 1024 * 1024))

class BuildError(Exception):
    pass

def build_matrix(n):
    try:
        return [[0.0] * n for _ in range(n)]
    except MemoryError as e:
        raise BuildError(f"could not build the {n}x{n} distance matrix") from e

build_matrix(20000)
