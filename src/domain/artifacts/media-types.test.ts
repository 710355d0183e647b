import {describe, expect, it} from 'vitest'
import {contentDisposition, contentTypeHeader, isInline, mediaTypeOf} from './media-types.js'

describe('media types and Content-Disposition', () => {
  it.each([
    ['notes.txt', 'text/plain', 'inline'],
    ['README.md', 'text/markdown', 'inline'],
    ['data.csv', 'text/csv', 'inline'],
    ['data.tsv', 'text/tab-separated-values', 'inline'],
    ['conf.json', 'application/json', 'inline'],
    ['conf.yaml', 'application/yaml', 'inline'],
    ['conf.yml', 'application/yaml', 'inline'],
    ['Cargo.toml', 'application/toml', 'inline'],
    ['main.py', 'text/plain', 'inline'],
    ['shot.png', 'image/png', 'inline'],
    ['shot.JPG', 'image/jpeg', 'inline'],
    ['anim.gif', 'image/gif', 'inline'],
    ['pic.webp', 'image/webp', 'inline'],
    ['page.html', 'text/html', 'attachment'],
    ['logo.svg', 'image/svg+xml', 'attachment'],
    ['paper.pdf', 'application/pdf', 'attachment'],
    ['app.js', 'text/javascript', 'attachment'],
    ['blob.bin', 'application/octet-stream', 'attachment'],
    ['noextension', 'application/octet-stream', 'attachment'],
  ])('%s is %s, %s', (name, type, disposition) => {
    expect(mediaTypeOf(name)).toBe(type)
    expect(isInline(type)).toBe(disposition === 'inline')
    expect(contentDisposition(type, name).split(';')[0]).toBe(disposition)
  })
  it('quotes names safely and keeps the exact UTF-8 name', () => {
    expect(contentDisposition('text/plain', 'a "b"\\c é.txt')).toBe(`inline; filename="a _b__c _.txt"; filename*=UTF-8''a%20%22b%22%5Cc%20%C3%A9.txt`)
  })
  it('declares UTF-8 on text', () => {
    expect(contentTypeHeader('text/markdown')).toBe('text/markdown; charset=utf-8')
    expect(contentTypeHeader('image/png')).toBe('image/png')
  })
})
