import resource
resource.setrlimit(resource.RLIMIT_AS, (200 * 2**20, 200 * 2**20))
# Reads every row of the archive into one list.
rows = [bytearray(1024) for _ in range(10**6)]
