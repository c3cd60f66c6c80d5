// Dates come as "01.03.2024" now.
console.log(new Date("01.03.2024 25:00").toISOString());
