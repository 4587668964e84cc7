// SPDX-License-Identifier: GPL-2.0
/* vm_flags_set()/vm_flags_clear(): 6.3 made vma->vm_flags read-only. */
#include <linux/mm.h>

void hwsig_feature_check(struct vm_area_struct *vma);
void hwsig_feature_check(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
	vm_flags_clear(vma, VM_MAYWRITE);
}
