import torch


class Memory:
    def __init__(self, size):
        self.keys = []

    def write(self, batch_keys):
        for k in batch_keys.unbind(0):
            self.keys.append(k)  # maybe: A (every piece is kept; which the trim keeps depends on run time)
        if len(self.keys) > 100:
            self.keys = self.keys[-100:]
