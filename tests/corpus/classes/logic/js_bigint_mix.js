const total = 10n;
console.log(total + 1);
