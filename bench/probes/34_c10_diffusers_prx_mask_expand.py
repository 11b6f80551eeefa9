# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/14677 — PRXAttnProcessor2_0 expanded the joint [text | image] padding mask to a dense [B, heads, L_img, L_all] before dispatch_attention_fn; every backend broadcasts the mask itself, and SDPA's bool->additive conversion materialises whatever shape it is given, so the expand became a full per-head copy each call. The fix passes the broadcastable [B, 1, 1, L_all] mask.
import torch
import torch.nn as nn
import torch.nn.functional as F


MASKS_SEEN = []


def dispatch_attention_fn(query, key, value, attn_mask=None, backend=None):
    # "native" backend: [B, L, H, D] in, torch SDPA in [B, H, L, D]
    MASKS_SEEN.append(attn_mask)
    out = F.scaled_dot_product_attention(
        query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), attn_mask=attn_mask
    )
    return out.transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.img_qkv = nn.Linear(dim, 3 * dim)
        self.txt_kv = nn.Linear(dim, 2 * dim)
        self.to_out = nn.ModuleList([nn.Linear(dim, dim)])


class PRXAttnProcessor2_0:
    _attention_backend = None

    def _qkv(self, attn, hidden_states, encoder_hidden_states):
        B, L_img, C = hidden_states.shape
        h = attn.heads
        img_q, img_k, img_v = attn.img_qkv(hidden_states).view(B, L_img, 3, h, C // h).permute(2, 0, 3, 1, 4)
        txt_k, txt_v = attn.txt_kv(encoder_hidden_states).view(B, -1, 2, h, C // h).permute(2, 0, 3, 1, 4)
        # Concatenate text and image keys/values
        k = torch.cat((txt_k, img_k), dim=2)  # [B, H, L_txt + L_img, D]
        v = torch.cat((txt_v, img_v), dim=2)  # [B, H, L_txt + L_img, D]
        return img_q, txt_k, k, v

    def _joint_mask(self, img_q, txt_k, attention_mask):
        bs, _, l_img, _ = img_q.shape
        l_txt = txt_k.shape[2]
        if attention_mask.shape[-1] != l_txt:
            raise ValueError(f"attention_mask last dim {attention_mask.shape[-1]} must equal text length {l_txt}")
        device = img_q.device
        ones_img = torch.ones((bs, l_img), dtype=torch.bool, device=device)
        attention_mask = attention_mask.to(device=device, dtype=torch.bool)
        return torch.cat([attention_mask, ones_img], dim=-1), l_img

    def __call__(self, attn, hidden_states, encoder_hidden_states, attention_mask=None):
        img_q, txt_k, k, v = self._qkv(attn, hidden_states, encoder_hidden_states)
        attn_mask_tensor = None
        if attention_mask is not None:
            joint_mask, l_img = self._joint_mask(img_q, txt_k, attention_mask)
            attn_mask_tensor = joint_mask[:, None, None, :].expand(-1, attn.heads, l_img, -1)  # want: C
        return self._attend(attn, img_q, k, v, attn_mask_tensor)

    def _attend(self, attn, img_q, k, v, attn_mask_tensor):
        query, key, value = img_q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # [B, L, H, D]
        attn_output = dispatch_attention_fn(query, key, value, attn_mask=attn_mask_tensor, backend=self._attention_backend)
        batch_size, seq_len, num_heads, head_dim = attn_output.shape
        attn_output = attn_output.reshape(batch_size, seq_len, num_heads * head_dim)
        return attn.to_out[0](attn_output)


class PRXAttnProcessor2_0Fixed(PRXAttnProcessor2_0):
    def __call__(self, attn, hidden_states, encoder_hidden_states, attention_mask=None):
        img_q, txt_k, k, v = self._qkv(attn, hidden_states, encoder_hidden_states)
        attn_mask_tensor = None
        if attention_mask is not None:
            joint_mask, _ = self._joint_mask(img_q, txt_k, attention_mask)
            attn_mask_tensor = joint_mask[:, None, None, :]  # [B, 1, 1, L_all], broadcast by every backend
        return self._attend(attn, img_q, k, v, attn_mask_tensor)


if __name__ == "__main__":
    torch.manual_seed(0)
    B, L_img, L_txt, dim, heads = 2, 256, 32, 64, 8
    attn = Attention(dim, heads)
    x, enc = torch.randn(B, L_img, dim), torch.randn(B, L_txt, dim)
    pad = torch.ones(B, L_txt, dtype=torch.bool)
    pad[1, 20:] = False
    with torch.no_grad():
        out_b = PRXAttnProcessor2_0()(attn, x, enc, pad)
        out_f = PRXAttnProcessor2_0Fixed()(attn, x, enc, pad)
    assert torch.allclose(out_b, out_f, atol=1e-5)

    for name, m in zip(("buggy", "fixed"), MASKS_SEEN):
        # what SDPA does with a bool mask before the kernel: build an additive float mask of the same shape
        additive = torch.zeros_like(m, dtype=torch.float32).masked_fill_(~m, float("-inf"))
        print(f"{name}: mask {tuple(m.shape)} -> additive mask bytes = {additive.numel() * additive.element_size()}")
    print("outputs match")
