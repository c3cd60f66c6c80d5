import shutil
with open("report.csv", "w") as f:
    f.write("row\n" * 10000)
with open("report.csv", "rb") as src, open("/dev/full", "wb") as dst:
    shutil.copyfileobj(src, dst)
