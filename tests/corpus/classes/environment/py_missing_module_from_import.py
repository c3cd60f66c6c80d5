from openpyxl_healer_corpus import load_workbook
print(load_workbook("report.xlsx"))
