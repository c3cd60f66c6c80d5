import os
open("exports", "w").close()  # a file where the exports folder should be
print(os.listdir("exports"))
