import json5_healer_corpus as json5
print(json5.loads("{a: 1}"))
