import datetime, os

os.makedirs("exports", exist_ok=True)
for day in ("2026-11-26", "2026-11-27"):
    with open(f"exports/sales-{day}.csv", "w") as f:
        f.write("id,total\n1,10\n")

print("files in exports:", ", ".join(sorted(os.listdir("exports"))))
day = datetime.date(2026, 11, 27)
with open(f"exports/sales_{day:%Y_%m_%d}.csv") as f:
    print(f.read())
