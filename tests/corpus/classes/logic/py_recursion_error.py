def depth(node):
    # The tree has a cycle now; the walk never ends.
    return 1 + depth(node["parent"])

node = {"name": "root"}
node["parent"] = node
print(depth(node))
