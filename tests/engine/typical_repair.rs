//! A typical repair, shared by the budget test and `benches/repair_budget.rs`: a 150-line
//! Python script that logs 400 lines and then fails on a KeyError, and its fix.

#![allow(dead_code)]

/// A daily sales report: helpers per region, 400 log lines, then a KeyError ("total" is now
/// "amount" in the data). The fix reads "amount".
pub fn scripts() -> (String, String) {
    let mut code = String::from(
        "\"\"\"Daily sales report: totals per region, written to report.json.\"\"\"\n\
         import json\nimport logging\nimport sys\n\n\
         logging.basicConfig(stream=sys.stdout, level=logging.INFO, format=\"%(levelname)s %(message)s\")\n\
         log = logging.getLogger(\"report\")\n\n\
         REGIONS = [\"north\", \"south\", \"east\", \"west\", \"centre\", \"coast\", \"hills\", \"lakes\"]\n\n",
    );
    for region in [
        "north", "south", "east", "west", "centre", "coast", "hills", "lakes", "islands", "valley",
        "plains", "forest", "harbour", "mountain", "border", "capital", "delta",
    ] {
        code.push_str(&format!(
            "def total_{region}(rows):\n    \"\"\"Sales of the {region} region for today's report.\"\"\"\n    \
             picked = [r for r in rows if r[\"region\"] == \"{region}\"]\n    \
             amount = sum(r[\"total\"] for r in picked)\n    \
             log.info(\"region %s: %d orders, %.2f\", \"{region}\", len(picked), amount)\n    \
             return amount\n\n"
        ));
    }
    code.push_str(
        "def load():\n    rows = []\n    for n in range(400):\n        \
         rows.append({\"order\": n, \"region\": REGIONS[n % len(REGIONS)], \"amount\": n * 1.5})\n        \
         log.info(\"order %05d read from the export: region %s, amount %.2f\", n, rows[-1][\"region\"], rows[-1][\"amount\"])\n    \
         return rows\n\n\n\
         def main():\n    rows = load()\n    report = {\n        \"north\": total_north(rows),\n        \
         \"south\": total_south(rows),\n        \"east\": total_east(rows),\n    }\n    \
         with open(\"report.json\", \"w\") as out:\n        json.dump(report, out)\n    \
         print(json.dumps(report))\n\n\nmain()\n",
    );
    let fixed = code.replace(
        "r[\"total\"] for r in picked",
        "r[\"amount\"] for r in picked",
    );
    (code, fixed)
}
