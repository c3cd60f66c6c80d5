import os
with open("credentials.json", "w") as f:
    f.write("{}")
os.chmod("credentials.json", 0)
with open("credentials.json") as f:
    print(f.read())
