import resource
resource.setrlimit(resource.RLIMIT_AS, (300 * 2**20, 300 * 2**20))
rows = []
while True:
    rows.append(bytearray(50 * 2**20))
