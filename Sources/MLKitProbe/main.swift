// Placeholder until the speed probe lands.
print("mlkit-probe")
