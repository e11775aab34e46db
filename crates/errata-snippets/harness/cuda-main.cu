// harness=cuda-main: the fragment is the body of `main` (after cuda-common.h).
int main() {
{{FRAGMENT}}
    return 0;
}
