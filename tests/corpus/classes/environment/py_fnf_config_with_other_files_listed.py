import os
os.makedirs("conf", exist_ok=True)
open("conf/README.txt", "w").write("put mailer.ini here\n")
print("conf holds:", os.listdir("conf"))
with open("conf/mailer.ini") as f:
    print(f.read())
