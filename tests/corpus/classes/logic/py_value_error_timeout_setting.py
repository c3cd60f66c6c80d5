settings = {"timeout": "30s", "retries": "3"}
timeout = float(settings["timeout"])
print("using a timeout of", timeout)
