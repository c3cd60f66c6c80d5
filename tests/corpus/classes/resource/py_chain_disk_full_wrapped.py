class ExportError(Exception):
    pass

def export(rows):
    try:
        with open("/dev/full", "w") as out:
            for row in rows:
                out.write(row)
            out.flush()
    except OSError as e:
        raise ExportError("the export could not be written") from e

export(["id,total\n"] * 5000)
