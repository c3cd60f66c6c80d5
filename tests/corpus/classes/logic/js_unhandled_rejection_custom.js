class ExportError extends Error {}
async function exportRows(rows) {
  if (!rows.length) throw new ExportError("the export has no rows for today");
}
exportRows([]);
