import resource
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
with open("export.csv", "w") as out:
    for n in range(10000):
        out.write(f"{n},row\n")
