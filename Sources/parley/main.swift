print("parley")
