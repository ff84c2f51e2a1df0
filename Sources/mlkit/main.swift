// Placeholder until the CLI lands.
print("mlkit")
