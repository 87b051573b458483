"""Drive interfaces over CAN, simulated drives, capture."""
