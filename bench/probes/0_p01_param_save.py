import torch


def dump_first(batch, path):
    torch.save(batch[0], path)  # want: A


def main():
    x = torch.randn(64, 128)
    dump_first(x, "/tmp/a.pt")


if __name__ == "__main__":
    main()
