# Each line had two fields; now it has three.
for line in ["north,12,EUR", "south,7,EUR"]:
    region, amount = line.split(",")
    print(region, amount)
