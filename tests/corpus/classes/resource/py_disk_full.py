with open("/dev/full", "w") as out:
    out.write("report\n" * 1000)
    out.flush()
