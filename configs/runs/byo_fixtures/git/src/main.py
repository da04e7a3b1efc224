def main():
    print("atlas")
