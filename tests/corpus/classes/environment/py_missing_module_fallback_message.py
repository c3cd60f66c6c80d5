try:
    import ruamel.yaml as yaml
except ImportError as e:
    raise SystemExit(f"this script needs ruamel.yaml: {e}")
print(yaml.safe_load("a: 1"))
