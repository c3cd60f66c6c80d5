import resource
resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
handles = [open(f"part-{n}.csv", "w") for n in range(100)]
