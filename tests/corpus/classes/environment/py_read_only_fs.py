with open("/proc/version", "w") as f:
    f.write("new")
