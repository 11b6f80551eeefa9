# source: ultralytics/ultralytics https://github.com/ultralytics/ultralytics/pull/24213 — the SAM3 TransformerDecoder.forward clamped presence logits with the out-of-place `intermediate_layer_presence_logits.clamp(min=..., max=...)` and discarded the result, so unclamped logits were appended and stacked; the fix uses `.clamp_(...)`.
import torch
import torch.nn as nn


class TransformerDecoder(nn.Module):
    def __init__(self, d_model=16, num_layers=3, num_queries=4, clamp_presence_logits=True,
                 clamp_presence_logit_max_val=10.0):
        super().__init__()
        self.num_layers = num_layers
        self.layers = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.bbox_embed = nn.Linear(d_model, 4)
        self.query_embed = nn.Parameter(torch.randn(num_queries, 1, d_model))
        self.presence_token = nn.Parameter(torch.randn(1, 1, d_model))
        self.presence_token_out_norm = nn.LayerNorm(d_model)
        self.presence_token_head = nn.Linear(d_model, 1)
        self.clamp_presence_logits = clamp_presence_logits
        self.clamp_presence_logit_max_val = clamp_presence_logit_max_val

    def forward(self, memory, is_instance_prompt=False):
        output = self.query_embed.expand(-1, memory.shape[1], -1) + memory.mean(0, keepdim=True)
        presence_out = self.presence_token.expand(-1, memory.shape[1], -1)
        reference_boxes = torch.full((output.shape[0], output.shape[1], 4), 0.5)
        intermediate, intermediate_ref_boxes, intermediate_presence_logits = [], [reference_boxes], []
        presence_feats = None
        out_norm = self.norm
        for layer_idx, layer in enumerate(self.layers):
            output = layer(output).relu() + output
            presence_out = layer(presence_out) + presence_out
            reference_before_sigmoid = torch.logit(reference_boxes, eps=1e-5)
            delta_unsig = self.bbox_embed(out_norm(output))
            outputs_unsig = delta_unsig + reference_before_sigmoid
            new_reference_points = outputs_unsig.sigmoid()

            reference_boxes = new_reference_points.detach()
            if layer_idx != self.num_layers - 1:
                intermediate_ref_boxes.append(new_reference_points)

            intermediate.append(out_norm(output))
            if self.presence_token is not None and is_instance_prompt is False:
                # norm, mlp head
                intermediate_layer_presence_logits = self.presence_token_head(
                    self.presence_token_out_norm(presence_out)
                ).squeeze(-1)

                # clamp to mitigate numerical issues
                if self.clamp_presence_logits:
                    intermediate_layer_presence_logits.clamp(  # want: B
                        min=-self.clamp_presence_logit_max_val,
                        max=self.clamp_presence_logit_max_val,
                    )

                intermediate_presence_logits.append(intermediate_layer_presence_logits)
                presence_feats = presence_out.clone()

        return (
            torch.stack(intermediate),
            torch.stack(intermediate_ref_boxes),
            (
                torch.stack(intermediate_presence_logits)
                if self.presence_token is not None and is_instance_prompt is False
                else None
            ),
            presence_feats,
        )


def clamp_presence_fixed(decoder, intermediate_layer_presence_logits):
    if decoder.clamp_presence_logits:
        intermediate_layer_presence_logits.clamp_(
            min=-decoder.clamp_presence_logit_max_val,
            max=decoder.clamp_presence_logit_max_val,
        )
    return intermediate_layer_presence_logits


if __name__ == "__main__":
    torch.manual_seed(0)
    dec = TransformerDecoder()
    with torch.no_grad():
        dec.presence_token_head.bias.fill_(50.0)  # huge logits, as happen numerically
        _, _, presence, _ = dec(torch.randn(5, 2, 16))
    print("buggy max |presence logit| (should be <= 10):", presence.abs().max().item())
    print("fixed:", clamp_presence_fixed(dec, presence.clone()).abs().max().item())
