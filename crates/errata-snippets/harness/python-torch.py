# harness=python-torch: the fragment runs after `import torch`.
import torch

{{FRAGMENT}}
