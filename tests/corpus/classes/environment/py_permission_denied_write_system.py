with open("/usr/local/share/daily-report.json", "w") as f:
    f.write("{}")
